"""Background jobs: commands that outlived their ``bash`` call (``Job``), the ``JobManager`` that
adopts and lists them, and the ``job_output``/``job_kill`` tools."""
