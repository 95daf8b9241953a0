from .shadow import shadow
