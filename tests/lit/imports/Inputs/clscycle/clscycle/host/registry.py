# A class is defined, then a module that imports it back: Python finds the class in this
# partially initialized module.
class Base:
    pass


from .plugin import Plugin


class Registry(Base):
    pass
