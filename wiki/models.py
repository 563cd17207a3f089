"""Models of Wiki."""
