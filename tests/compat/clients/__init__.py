"""The clients under test, each driven in its own idiom behind one small interface."""
