"""The desktop shell: the pywebview window and the tray around the backend."""
