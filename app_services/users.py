"""Manage a shared app's password accounts and users' data:

    python -m app_services.users add NAME          # asks for the password (or --password-stdin)
    python -m app_services.users list
    python -m app_services.users remove NAME [--data]
    python -m app_services.users delete-data ID     # a user's stores and edits (OIDC ids: oidc-...)
"""

from __future__ import annotations

import argparse
import getpass
import sys

from . import auth, workspace


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app_services.users", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add", help="make an account or set its password")
    add.add_argument("name")
    add.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    sub.add_parser("list", help="accounts, and folders of users without one (OIDC)")
    rm = sub.add_parser("remove", help="remove an account")
    rm.add_argument("name")
    rm.add_argument("--data", action="store_true", help="and delete its stores and edits")
    dd = sub.add_parser("delete-data", help="delete a user's stores, edits and profile")
    dd.add_argument("user_id")
    args = parser.parse_args(argv)
    try:
        if args.command == "add":
            if args.password_stdin:
                password = sys.stdin.readline().rstrip("\n")
            else:
                password = getpass.getpass(f"password for {args.name}: ")
                if getpass.getpass("again: ") != password:
                    print("the two passwords differ", file=sys.stderr)
                    return 1
            auth.set_password(args.name, password)
            print(f"{args.name}: password set in {auth.users_file()}")
        elif args.command == "list":
            accounts = auth.load_users()
            folders = sorted(p.name for p in workspace.users_root().glob("*") if p.is_dir())
            for name in sorted(set(accounts) | set(folders)):
                print(f"{name}\t{'account' if name in accounts else 'no account'}\t"
                      f"{'data' if name in folders else 'no data'}")
        elif args.command == "remove":
            if not auth.remove_user(args.name):
                print(f"no account {args.name!r}", file=sys.stderr)
                return 1
            if args.data:
                workspace.delete_user_data(args.name)
            print(f"{args.name}: removed" + (" with its data" if args.data else ""))
        elif args.command == "delete-data":
            print(f"{args.user_id}: " + ("data deleted" if workspace.delete_user_data(args.user_id) else "no data"))
    except (ValueError, auth.AuthConfigError) as err:
        print(err, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
