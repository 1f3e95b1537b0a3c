"""Prints a plan's worker count, its levels and their product, and whether
every level splits (is at least 2): "K=1000 levels [5, 2, ...] product
1000 splitting". usage: levels_product.py PLAN.json"""
import json
import sys

plan = json.load(open(sys.argv[1]))
product = 1
for f in plan["levels"]:
    product *= f
splitting = all(f >= 2 for f in plan["levels"])
print("K=%d levels %s product %d %s" % (plan["workers"], plan["levels"], product,
                                       "splitting" if splitting else "NOT-SPLITTING"))
