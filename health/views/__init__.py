"""Node-health pages: ``pages`` read (health, nodes, estimation runs, the spare
calculator), ``actions`` act (drain, estimate, upload, keep the fastest), ``charts``
draws for both."""
