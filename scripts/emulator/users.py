# Creates one Cognito user per tenant in the deployed stack's user pool and prints their ID tokens,
# as JSON {"<tenant>": "<id token>", ...}, the way docs/deploy.md (steps 5 and 6) does it by hand:
# AdminCreateUser with custom:tenant, AdminSetUserPassword (permanent), then AdminInitiateAuth
# with ADMIN_USER_PASSWORD_AUTH. Uses botocore from .venv-emulator (a ministack dependency), so the
# lane needs no Cognito client in the npm tree.
#
# Usage: users.py <endpoint> <region> <user pool id> <client id> <tenant>...
# Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY. Passwords are random per run and
# never printed.
import json
import secrets
import sys

import botocore.session


def main(endpoint, region, pool_id, client_id, *tenants):
    cognito = botocore.session.get_session().create_client("cognito-idp", region_name=region, endpoint_url=endpoint)
    tokens = {}
    for tenant in tenants:
        username = f"e2e-{tenant}"
        # Meets the pool's policy: 12+ characters with lower, upper, digit and symbol.
        password = f"Aa1!{secrets.token_urlsafe(24)}"
        try:
            cognito.admin_create_user(
                UserPoolId=pool_id,
                Username=username,
                UserAttributes=[{"Name": "custom:tenant", "Value": tenant}],
                MessageAction="SUPPRESS",
            )
        except cognito.exceptions.UsernameExistsException:
            pass  # a rerun against the same stack: the tenant attribute is immutable and already set
        cognito.admin_set_user_password(UserPoolId=pool_id, Username=username, Password=password, Permanent=True)
        auth = cognito.admin_initiate_auth(
            UserPoolId=pool_id,
            ClientId=client_id,
            AuthFlow="ADMIN_USER_PASSWORD_AUTH",
            AuthParameters={"USERNAME": username, "PASSWORD": password},
        )
        tokens[tenant] = auth["AuthenticationResult"]["IdToken"]
    json.dump(tokens, sys.stdout)


if __name__ == "__main__":
    if len(sys.argv) < 6:
        sys.exit("usage: users.py <endpoint> <region> <user pool id> <client id> <tenant>...")
    main(*sys.argv[1:])
