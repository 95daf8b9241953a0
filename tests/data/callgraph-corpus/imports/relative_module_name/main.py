import pkg.front

pkg.front.go()
