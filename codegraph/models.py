"""Models of CodeGraph."""
