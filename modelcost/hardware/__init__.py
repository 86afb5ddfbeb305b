"""modelcost.hardware"""
