"""The HTTP layer: thin handlers that translate HTTP to a pipeline call and back."""
