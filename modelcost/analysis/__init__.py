"""modelcost.analysis"""
