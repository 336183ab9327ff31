"""What-if replay of a site's job log: every policy and spare rule on the machine."""
