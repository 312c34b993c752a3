"""Search caches shared by both backends (issue 15): each keeps, per scope, what searches read
again and again, valid at the scope's versions, and answers as the store would. The loading is
each backend's (``store/sqlite``, ``store/postgres``); the locks here are leaves: never held
while reading the store or while taking another lock."""
