import pkg

pkg.func()
