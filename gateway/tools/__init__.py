"""Tool calls in a request: a non-clinical request lifted to the model; trusted tool results as passages."""
