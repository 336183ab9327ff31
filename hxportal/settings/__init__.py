"""Settings package: ``base`` holds everything shared, the others adjust it.

``local`` (the default for ``manage.py``) needs nothing installed; ``production``
refuses to start without its secrets; ``test`` is what pytest uses.
"""
