#!/usr/bin/env bash
# Smoke: a stored event is in WORK with the headers SPEC 2 requires.
. "$(dirname "$0")/lib.sh"
start_nats && start_relay || { fail start "nats-server or relay did not start"; finish; }

post evt.acme.shop.order.created smoke-1 'hello'
check "202 for a valid event" 202 "$STATUS"
check "body names the id" '{"id":"smoke-1","duplicate":false}' "$BODY"
msg=$("$JSGET" "$NATS_URL_T" last WORK evt.acme.shop.order.created)
check_match "Nats-Msg-Id is producer-scoped" $'Nats-Msg-Id: alpha:smoke-1' "$msg"
check_match "Treaty-Producer header" $'Treaty-Producer: alpha' "$msg"
check_match "ce-type header" $'ce-type: dev.shop.order.created.v1' "$msg"
check "payload is the body" hello "${msg##*$'\n\n'}"
finish
