"""p4scope's tests, a package tree: helpers are modules imported by their
full name (`from tests.switch.sw_client import update`) and the fixtures
every folder shares live in tests/fixtures/, registered by tests/conftest.py."""
