from .registry import Base


class Plugin(Base):
    pass
