"""Types, errors and helpers shared by every layer; imports only the standard library."""
