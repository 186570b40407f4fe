"""Claims: a draft split into statements, and the bounds a reply must keep before it is verified."""
