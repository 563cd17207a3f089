"""Models of Memory."""
