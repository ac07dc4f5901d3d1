"""SQLite storage through peewee: the database object, models and migrations."""
