from pkg import public

public()
