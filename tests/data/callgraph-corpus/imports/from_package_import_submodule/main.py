from pkg import tools

tools.func()
