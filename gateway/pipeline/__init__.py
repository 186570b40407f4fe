"""The request pipeline: one stage per module, wired top to bottom in ``run.answer``."""
