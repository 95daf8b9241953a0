try:
    import missing_accelerated as impl
except ImportError:
    import fallback as impl

impl.func()
