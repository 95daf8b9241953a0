from pkg.models import Net

Net(2).forward()
