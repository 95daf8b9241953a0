import sys
import acts

name = sys.argv[1] if len(sys.argv) > 1 else "relu"
getattr(acts, name)()
