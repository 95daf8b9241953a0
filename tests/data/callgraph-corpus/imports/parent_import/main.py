from pkg.sub.leaf import go

go()
