import os

DEFAULT_NAME = "x"


class Base:
    def save(self, path):
        return os.path.join(path, self.name())


class User(Base):
    """A user."""

    @property
    def name(self) -> str:
        return helper(DEFAULT_NAME)

    def greet(self, other: "User") -> str:
        def inner():
            return 1
        return inner()


def helper(value):
    return value.upper()


__all__ = ["User", "helper"]
NAMES = ["Base"]
