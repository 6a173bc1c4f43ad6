"""API errors in the shape the real Messages API returns them.

An error body is ``{"type": "error", "error": {"type": ..., "message": ...}, "request_id": ...}``;
``error.details`` is added when the error has a machine-readable ``error_code``
(the SDK reads ``error.details.error_code``, for example for message threads).
"""

from __future__ import annotations

from typing import Any

# Default error type for each HTTP status, as documented for the Messages API.
ERROR_TYPE_BY_STATUS: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    503: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def error_type_for(status: int) -> str:
    """The documented error ``type`` for an HTTP status (``api_error`` when unknown)."""
    return ERROR_TYPE_BY_STATUS.get(status, "api_error")


class ApiError(Exception):
    """An error response: HTTP status, error type, message and optional details."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        error_type: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.error_type = error_type or error_type_for(status)
        self.details = details

    def body(self, request_id: str) -> dict[str, Any]:
        """The JSON error body."""
        error: dict[str, Any] = {"type": self.error_type, "message": self.message}
        if self.details is not None:
            error["details"] = self.details
        return {"type": "error", "error": error, "request_id": request_id}


def invalid_request(message: str, details: dict[str, Any] | None = None) -> ApiError:
    """A 400 ``invalid_request_error``."""
    return ApiError(400, message, details=details)
