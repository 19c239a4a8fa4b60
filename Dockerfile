# Builds podium-operator and the podium CLI into a distroless, non-root image.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY controllers/ controllers/
COPY internal/ internal/
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/podium-operator ./cmd/operator && \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X podium.dev/podium/internal/cli.Version=${VERSION}" -o /out/podium ./cmd/podium

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/podium-operator /podium-operator
COPY --from=build /out/podium /podium
USER 65532:65532
EXPOSE 8080 8081 8443
ENTRYPOINT ["/podium-operator"]
