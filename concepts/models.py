"""Models of Knowledge graph."""
