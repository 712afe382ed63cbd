"""Sessions, configuration and the runtime every front end drives (``owltui.session.runtime.runtime``)."""
