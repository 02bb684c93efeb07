"""Code the services of the monorepo share."""
