"""Trust: source tiers and scores, the badges per claim and the response's trust report."""
