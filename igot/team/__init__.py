"""The team of a library served to several people (`igot serve --team`): who they are, how they
sign in, what each may do, what they changed and what they said about it.

Everything lives in one SQLite database in the library's own folder (LIB/.igot/team.sqlite3), so
the team travels with the library and the web routes only ask this package: `db` opens it (every
write through one door), `people` invites and signs people in, `throttle` slows down guessing,
`sessions` keeps them signed in, `roles` says who may do what, `activity` and `comments` are the
team's feed and threads, `shares` the links for people outside the team, `cli` is `igot people`.
It imports only igot.errors and igot.runtime.
"""
