"""Clinical trust gateway."""
