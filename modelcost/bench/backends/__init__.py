"""modelcost.bench.backends"""
