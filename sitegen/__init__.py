"""sitegen: keep a living systematic review current and publish it as a static site."""

__version__ = "0.1.0"
