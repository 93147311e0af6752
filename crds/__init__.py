"""Package data, no code: the CRD YAML files beside this one (``kubectl apply -f crds/`` reads only the YAML).

A package only so that the wheel ships them and the product finds them with :mod:`importlib.resources` wherever
it is installed (:mod:`productfiles` is the one module that looks them up). ``samples/`` stays out of the wheel.
"""
