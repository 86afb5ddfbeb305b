"""modelcost.bench"""
