"""What a seat sees, drawn: ``text`` (the ANSI board) and ``picture`` (the seat view model, the
picture and the pygame window). Views read an engine state; they never change it."""
