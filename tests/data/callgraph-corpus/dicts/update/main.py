def base_op():
    pass

def plugin_op():
    pass

ops = {"op": base_op}
ops.update({"plugin": plugin_op})
ops["plugin"]()
