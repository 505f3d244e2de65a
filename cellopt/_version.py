"""The version of cellopt, in one place: the package face, the modules below it and the
build (``pyproject.toml``, ``[tool.setuptools.dynamic]``) read it from here."""

__version__ = "0.1.0"
