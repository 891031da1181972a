"""The retry rule, where the vendor clients import it from (it lives in :mod:`osw_studio.agent.retry`)."""

from __future__ import annotations

from osw_studio.agent.retry import MAX_RETRY_WAIT as MAX_RETRY_WAIT
from osw_studio.agent.retry import RETRYABLE as RETRYABLE
from osw_studio.agent.retry import RetryCallback as RetryCallback
from osw_studio.agent.retry import retry_wait as retry_wait
from osw_studio.agent.retry import with_retries as with_retries
