"""What `langgraph.json` mounts: the Auth handlers (`auth`), the custom app (`app`) and its routes.

The app's middleware `inbox_marks` makes the handlers' inbox marks once the engine answered 2xx.
Thin: each handler hands a request to identity, admission, decisions or records and turns a
refusal into its HTTP status. The web app's files and the public pages are served here too.
"""
