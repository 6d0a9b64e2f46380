"""The workspace's routes, a module per resource. Each module's `router(ctx)` returns an APIRouter
whose every route declares what it needs (igot.workspace.access.need): the app refuses one that
does not. Handlers are thin: they read the request's shape and call the library's store, the
views, the team's package."""
