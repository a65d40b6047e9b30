"""The folders SK Memory brings with it: the demo project and the user documentation, each a built-in project."""
