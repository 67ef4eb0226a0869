// fake-pg's payment SDK: the shape of Toss Payments' SDK v2 (`TossPayments(clientKey)
// .payment({ customerKey }).requestPayment({...})`), card payments with return URLs.
// The window replaces the page; with the PG's `window_mode: "toss"` it opens, as
// Toss's does, in an iframe over the page on a PC (a fine pointer), where the
// customer's ✕ rejects the promise with USER_CANCEL.
// Arguments are checked as Toss's SDK checks them: a bad one rejects the promise with
// Toss's error code, and no window opens. Served by fake-pg at /v2/standard.
(function () {
  "use strict";
  var PG = "__PG_URL__";
  var CLIENT_KEY = "__CLIENT_KEY__";
  var WINDOW_MODE = "__WINDOW_MODE__";
  var ANONYMOUS = "@@ANONYMOUS";
  var ORDER_ID = /^[A-Za-z0-9_=-]{6,64}$/;
  var CUSTOMER_KEY = /^[A-Za-z0-9_=.@-]{2,50}$/;

  function sdkError(code, message) {
    var error = new Error(message);
    error.name = "TossPaymentsError";
    error.code = code;
    return error;
  }

  function isHttpUrl(url) {
    if (typeof url !== "string") return false;
    try {
      var parsed = new URL(url);
      return parsed.protocol === "http:" || parsed.protocol === "https:";
    } catch (_) {
      return false;
    }
  }

  // The first problem with a card payment request, as Toss's SDK reports it, or null.
  function problemWith(request) {
    if (!request || typeof request !== "object") {
      return sdkError("INVALID_PARAMETERS", "requestPayment needs an object of payment parameters.");
    }
    if (request.method !== "CARD") {
      return sdkError("NOT_SUPPORTED_METHOD", "This test PG takes card payments only (method: \"CARD\").");
    }
    var amount = request.amount;
    if (!amount || typeof amount !== "object" || typeof amount.value !== "number" || !Number.isInteger(amount.value)) {
      return sdkError("INVALID_AMOUNT_VALUE", "결제금액이 올바르지 않습니다.");
    }
    if (amount.currency !== "KRW") {
      return sdkError("INVALID_AMOUNT_CURRENCY", "잘못된 통화 값입니다.");
    }
    if (amount.value <= 0) {
      return sdkError("BELOW_ZERO_AMOUNT", "금액은 0보다 커야 합니다.");
    }
    if (typeof request.orderId !== "string" || !ORDER_ID.test(request.orderId)) {
      return sdkError("INVALID_PARAMETERS", "orderId must be 6 to 64 letters, digits, '-', '_' or '='.");
    }
    if (typeof request.orderName !== "string" || request.orderName.trim() === "" || request.orderName.length > 100) {
      return sdkError("INVALID_PARAMETERS", "orderName must be 1 to 100 characters.");
    }
    if (request.successUrl === undefined && request.failUrl === undefined) {
      return sdkError("NOT_SUPPORTED_PROMISE", "This test PG supports the redirect mode only: give successUrl and failUrl.");
    }
    if (!isHttpUrl(request.successUrl)) {
      return sdkError("INCORRECT_SUCCESS_URL_FORMAT", "잘못된 successUrl 입니다.");
    }
    if (!isHttpUrl(request.failUrl)) {
      return sdkError("INCORRECT_FAIL_URL_FORMAT", "잘못된 failUrl 입니다.");
    }
    return null;
  }

  function payment(options) {
    var customerKey = options && options.customerKey;
    if (customerKey !== ANONYMOUS && !(typeof customerKey === "string" && CUSTOMER_KEY.test(customerKey))) {
      throw sdkError("INVALID_CUSTOMER_KEY", "고객키는 영문 대소문자, 숫자, 특수문자 -, _, =, ., @로 2자 이상 50자 이하여야 합니다.");
    }
    var requesting = false;
    // Back from the window, a page restored from the back/forward cache may pay again.
    window.addEventListener("pageshow", function (event) {
      if (event.persisted) requesting = false;
    });
    return {
      requestPayment: function (request) {
        if (requesting) {
          return Promise.reject(sdkError("INVALID_METHOD_TRANSACTION", "이미 다른 요청을 수행하고 있어요."));
        }
        var problem = problemWith(request);
        if (problem) return Promise.reject(problem);
        requesting = true;
        var query = new URLSearchParams({
          clientKey: CLIENT_KEY,
          customerKey: customerKey,
          orderId: request.orderId,
          amount: String(request.amount.value),
          orderName: request.orderName,
          successUrl: request.successUrl,
          failUrl: request.failUrl,
          lang: document.documentElement.lang || "",
        });
        var url = PG + "/v1/window?" + query.toString();
        if (WINDOW_MODE === "toss" && !window.matchMedia("(pointer: coarse)").matches) {
          return openOverPage(url + "&embedded=1", function () {
            requesting = false;
          });
        }
        window.location.assign(url);
        // The page is leaving, so the promise never settles.
        return new Promise(function () {});
      },
    };
  }

  // The window in an iframe over the page. A card navigates the whole page to
  // the return URL, so the promise settles only when the customer closes it.
  // Styles go through the CSSOM, which a page's style-src does not restrict.
  function openOverPage(url, closed) {
    var overlay = document.createElement("div");
    overlay.setAttribute("data-fake-pg-window", "");
    Object.assign(overlay.style, {
      position: "fixed", inset: "0", zIndex: "2147483647", display: "flex",
      alignItems: "center", justifyContent: "center", background: "rgba(0, 0, 0, 0.5)",
    });
    var frame = document.createElement("iframe");
    frame.src = url;
    frame.title = document.documentElement.lang === "ko" ? "결제창" : "Payment window";
    Object.assign(frame.style, {
      width: "min(30rem, 100%)", height: "min(48rem, 100%)", border: "0", borderRadius: "16px", background: "#f2f4f6",
    });
    overlay.appendChild(frame);
    document.body.appendChild(overlay);
    frame.focus();
    var origin = new URL(PG).origin;
    return new Promise(function (resolve, reject) {
      function onMessage(event) {
        if (event.origin !== origin || event.source !== frame.contentWindow) return;
        if (!event.data || event.data.source !== "fake-pg" || event.data.type !== "window-closed") return;
        window.removeEventListener("message", onMessage);
        overlay.remove();
        closed();
        reject(sdkError("USER_CANCEL", "사용자가 결제를 취소하였습니다"));
      }
      window.addEventListener("message", onMessage);
    });
  }

  function TossPayments(clientKey) {
    if (clientKey !== CLIENT_KEY) {
      throw sdkError("INVALID_CLIENT_KEY", "ClientKey 형태가 올바르지 않습니다.");
    }
    return { payment: payment };
  }
  TossPayments.ANONYMOUS = ANONYMOUS;
  window.TossPayments = TossPayments;
})();
