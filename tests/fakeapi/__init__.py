"""Tests of the fake Messages API (a package, so its conftest is not the top-level one)."""
